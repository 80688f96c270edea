-- The insurer whose service sent the request: two services may send the
-- same request id, so a request is keyed by (insurer, request_id). Rows
-- written before insurers get '' here; the daemon's first start gives
-- them to its one configured insurer (shopdb.Adopt).
ALTER TABLE `{{prefix}}requests`
  ADD COLUMN insurer VARCHAR(32) NOT NULL DEFAULT '' FIRST
