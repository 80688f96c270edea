-- A request is keyed by its insurer and its id: "7301" at two insurers is
-- two requests, each with its own job. UNIQUE(job_number) stays as it is:
-- a shop job number is held by one request at most, whatever its insurer.
ALTER TABLE `{{prefix}}requests`
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (insurer, request_id)
