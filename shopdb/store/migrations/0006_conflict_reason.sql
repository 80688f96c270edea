-- Rows written before version 6 marked a run of 409 answers to an accept
-- with the prefix "conflict: " in last_error: move it to the reason column.
UPDATE `{{prefix}}requests`
SET reason = 'accept_conflict', last_error = SUBSTRING(last_error, 11)
WHERE last_error LIKE 'conflict: %' AND reason = ''
