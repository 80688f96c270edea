UPDATE jobs SET status = 'CANCELLED'
WHERE job_no = :job AND :job_created = 1
  AND NOT EXISTS (SELECT 1 FROM estimates e JOIN estimate_lines l ON l.estimate_id = e.estimate_id
                  WHERE e.job_id = jobs.job_id AND l.deleted = 0);
