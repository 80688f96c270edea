-- Deliveries carry the insurer of their event (the notification's
-- "insurer", the write-back's :insurer).
ALTER TABLE `{{prefix}}outbox`
  ADD COLUMN insurer VARCHAR(32) NOT NULL DEFAULT '' AFTER kind
