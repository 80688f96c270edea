SELECT j.job_no AS job,
       MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final,
       CONCAT(MAX(e.status), '|', MAX(e.updated_at), '|',
              SUM(CASE WHEN l.deleted = 0 THEN 1 ELSE 0 END), '|',
              COALESCE(MAX(l.updated_at), '-')) AS marker
FROM jobs j
JOIN estimates e ON e.job_id = j.job_id
LEFT JOIN estimate_lines l ON l.estimate_id = e.estimate_id
WHERE j.job_no IN (:jobs)
GROUP BY j.job_no
