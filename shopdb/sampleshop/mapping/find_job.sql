SELECT j.job_no AS job
FROM jobs j
WHERE j.claim_number = :claim_number AND j.status <> 'CANCELLED'
