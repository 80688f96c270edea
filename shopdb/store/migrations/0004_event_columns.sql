-- Events carry the reason of a change and, for pushes, the items count and
-- the quote hash, so that a request's timeline can be shown from them.
ALTER TABLE `{{prefix}}events`
  MODIFY COLUMN kind VARCHAR(32) NOT NULL,
  ADD COLUMN reason VARCHAR(32) NOT NULL DEFAULT '' AFTER to_phase,
  ADD COLUMN items  INT         NOT NULL DEFAULT 0 AFTER duration_ms,
  ADD COLUMN hash   VARCHAR(64) NOT NULL DEFAULT '' AFTER items
