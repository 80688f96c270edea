SELECT (SELECT MAX(updated_at) FROM estimate_lines) AS lines_changed,
       (SELECT COUNT(*) FROM estimates) AS estimate_count,
       (SELECT MAX(updated_at) FROM estimates) AS estimates_changed
