-- The remaining rows of before version 8 get the reason their phase and
-- last_error imply.
UPDATE `{{prefix}}requests`
SET reason = CASE
    WHEN phase = 'waiting' AND last_error = '' THEN 'no_job'
    WHEN phase = 'waiting' THEN 'reserve_failed'
    WHEN phase = 'rejected' AND resume_phase = 'waiting' THEN 'job_conflict'
    WHEN phase = 'rejected' THEN 'refused'
    WHEN phase = 'gone' AND last_error LIKE '%no longer knows%' THEN 'unknown_request'
    WHEN phase = 'gone' THEN 'left_list'
    WHEN attempts > 0 AND last_error <> '' THEN 'retrying'
    ELSE '' END
WHERE reason = ''
