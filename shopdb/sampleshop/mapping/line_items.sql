SELECT j.job_no AS job, l.line_id, l.line_no, l.op_code AS code, l.description,
       l.part_no AS part_number, l.qty AS quantity, l.unit_price AS price, l.line_total AS total,
       l.markup, l.on_report AS is_on_report, l.supplier AS meta_supplier
FROM jobs j
JOIN estimates e ON e.job_id = j.job_id
JOIN estimate_lines l ON l.estimate_id = e.estimate_id
WHERE j.job_no IN (:jobs) AND l.deleted = 0
