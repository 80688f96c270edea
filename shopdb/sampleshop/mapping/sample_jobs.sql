SELECT j.job_no AS job, j.claim_number, j.registration
FROM jobs j
WHERE j.claim_number IS NOT NULL AND j.status <> 'CANCELLED'
ORDER BY j.job_id DESC
LIMIT 20
