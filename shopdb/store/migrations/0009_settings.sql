-- What the daemon learnt about the remote and keeps across restarts (for
-- example the status path form that remote.status_path: auto found).
CREATE TABLE IF NOT EXISTS `{{prefix}}settings` (
  name       VARCHAR(64) NOT NULL,
  value      TEXT        NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
