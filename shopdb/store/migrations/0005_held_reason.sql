-- Rows written before version 5 marked a job held for invalid shop data
-- with the prefix "shop data: " in last_error: move it to the reason column.
UPDATE `{{prefix}}requests`
SET reason = 'shop_data', last_error = SUBSTRING(last_error, 12)
WHERE last_error LIKE 'shop data: %' AND reason = ''
