-- The id a notification carries (and its Idempotency-Key header): a
-- UUIDv7 drawn when the event is recorded, the same in the rows of all
-- its targets and for every attempt, and unique across databases and
-- shops (the event's row number is not: a re-created database or a
-- second shop counts from 1 again). NULL in the rows queued before this
-- migration, which keep the id they were sent with,
-- "quotesync-event-<event_id>".
ALTER TABLE `{{prefix}}outbox` ADD COLUMN notice_id VARCHAR(40) NULL
