-- The outbox: what is delivered after an event is recorded (the mapping's
-- write-back statement, a notification). Its rows are written in the
-- event's transaction; a delivery marks its row done in the transaction
-- that performs it (write-back) or right after it (notification).
-- once_key makes a notice that must not repeat (a request close to expiry,
-- an episode of refused tokens) unique while it is set.
CREATE TABLE IF NOT EXISTS `{{prefix}}outbox` (
  id              BIGINT       NOT NULL AUTO_INCREMENT,
  event_id        BIGINT       NOT NULL,
  target          VARCHAR(16)  NOT NULL,
  kind            VARCHAR(32)  NOT NULL,
  request_id      VARCHAR(64)  NOT NULL DEFAULT '',
  claim           VARCHAR(128) NOT NULL DEFAULT '',
  job             VARCHAR(64)  NOT NULL DEFAULT '',
  phase           VARCHAR(16)  NOT NULL DEFAULT '',
  reason          VARCHAR(32)  NOT NULL DEFAULT '',
  detail          TEXT         NULL,
  `at`            DATETIME(6)  NOT NULL,
  attempts        INT          NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(6)  NOT NULL,
  last_error      TEXT         NULL,
  failed_at       DATETIME(6)  NULL,
  done_at         DATETIME(6)  NULL,
  once_key        VARCHAR(160) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY `{{prefix}}outbox_event_target` (event_id, target),
  UNIQUE KEY `{{prefix}}outbox_once` (once_key),
  KEY `{{prefix}}outbox_due` (done_at, next_attempt_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
