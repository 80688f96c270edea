-- The append-only event log: every phase change and remote call outcome.
CREATE TABLE IF NOT EXISTS `{{prefix}}events` (
  id          BIGINT       NOT NULL AUTO_INCREMENT,
  request_id  VARCHAR(64)  NOT NULL DEFAULT '',
  job         VARCHAR(64)  NOT NULL DEFAULT '',
  kind        VARCHAR(16)  NOT NULL,
  from_phase  VARCHAR(16)  NOT NULL DEFAULT '',
  to_phase    VARCHAR(16)  NOT NULL DEFAULT '',
  route       VARCHAR(128) NOT NULL DEFAULT '',
  status      INT          NOT NULL DEFAULT 0,
  attempt     INT          NOT NULL DEFAULT 0,
  duration_ms BIGINT       NOT NULL DEFAULT 0,
  message     TEXT         NULL,
  `at`        DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  KEY `{{prefix}}events_request` (request_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
