-- Events carry the insurer of their request ('' before insurers, until
-- the first start adopts them).
ALTER TABLE `{{prefix}}events`
  ADD COLUMN insurer VARCHAR(32) NOT NULL DEFAULT '' AFTER id
