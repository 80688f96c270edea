UPDATE counters SET next_val = next_val + 1 WHERE name = 'job';
INSERT INTO jobs (job_no, registration, claim_number, status, created_at)
SELECT CONCAT('RO-', c.next_val), :registration, :claim_number, 'OPEN', NOW()
FROM counters c WHERE c.name = 'job';
INSERT INTO estimates (job_id, status)
SELECT j.job_id, 'DRAFT'
FROM jobs j JOIN counters c ON j.job_no = CONCAT('RO-', c.next_val)
WHERE c.name = 'job';
SELECT CONCAT('RO-', c.next_val) AS job FROM counters c WHERE c.name = 'job';
