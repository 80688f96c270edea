-- A request's timeline is read by its insurer and id (the index on
-- request_id alone stays, for the reads across insurers).
CREATE INDEX `{{prefix}}events_insurer_request` ON `{{prefix}}events` (insurer, request_id, id)
