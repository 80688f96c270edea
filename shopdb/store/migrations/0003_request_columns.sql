-- The state machine's explicit columns: reason (why a request is where it
-- is, or what holds it), intent (the remote effect whose outcome is not
-- recorded yet), whether create_job made the job, and the job number a
-- request gave up when it was taken elsewhere.
ALTER TABLE `{{prefix}}requests`
  ADD COLUMN reason       VARCHAR(32) NOT NULL DEFAULT '' AFTER resume_phase,
  ADD COLUMN intent       VARCHAR(16) NOT NULL DEFAULT '' AFTER reason,
  ADD COLUMN job_created  TINYINT(1)  NOT NULL DEFAULT 0 AFTER intent,
  ADD COLUMN released_job VARCHAR(64) NOT NULL DEFAULT '' AFTER job_created
