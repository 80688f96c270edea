-- One row per remote quote request quotesync has seen. The UNIQUE keys make
-- a double acceptance (request_id) and a job number used for two requests
-- (job_number; NULL while waiting) impossible at the database level.
CREATE TABLE IF NOT EXISTS `{{prefix}}requests` (
  request_id        VARCHAR(64)  NOT NULL,
  claim_number      VARCHAR(128) NOT NULL DEFAULT '',
  job_number        VARCHAR(64)  NULL,
  phase             VARCHAR(16)  NOT NULL,
  resume_phase      VARCHAR(16)  NOT NULL DEFAULT '',
  pushed_hash       VARCHAR(128) NOT NULL DEFAULT '',
  pushed_marker     VARCHAR(255) NOT NULL DEFAULT '',
  supplement_needed TINYINT(1)   NOT NULL DEFAULT 0,
  attempts          INT          NOT NULL DEFAULT 0,
  next_attempt_at   DATETIME(6)  NULL,
  last_error        TEXT         NULL,
  expiry            DATETIME(6)  NULL,
  booking_date      DATETIME(6)  NULL,
  request_json      MEDIUMTEXT   NULL,
  created_at        DATETIME(6)  NOT NULL,
  updated_at        DATETIME(6)  NOT NULL,
  pushed_at         DATETIME(6)  NULL,
  submitted_at      DATETIME(6)  NULL,
  version           BIGINT       NOT NULL DEFAULT 1,
  PRIMARY KEY (request_id),
  UNIQUE KEY `{{prefix}}requests_job` (job_number),
  KEY `{{prefix}}requests_phase` (phase, submitted_at),
  KEY `{{prefix}}requests_created` (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
