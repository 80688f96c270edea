-- The sample shop-management schema: what a real SMS database looks like
-- (job numbers from a counter table, one estimate per job, soft-deleted
-- estimate lines, DECIMAL money). Plain SQL that MariaDB 10.11, MySQL 8 and
-- go-mysql-server all accept: no triggers, no procedures, no CHECKs.
-- Statements end with ";" at the end of a line.

CREATE TABLE counters (
  name     VARCHAR(32) NOT NULL,
  next_val BIGINT      NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE customers (
  customer_id INT          NOT NULL AUTO_INCREMENT,
  name        VARCHAR(128) NOT NULL,
  phone       VARCHAR(32)  NULL,
  email       VARCHAR(128) NULL,
  created_at  DATETIME     NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (customer_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE vehicles (
  vehicle_id   INT         NOT NULL AUTO_INCREMENT,
  customer_id  INT         NULL,
  registration VARCHAR(16) NOT NULL,
  vin          VARCHAR(17) NULL,
  make         VARCHAR(64) NULL,
  model        VARCHAR(64) NULL,
  model_year   SMALLINT    NULL,
  PRIMARY KEY (vehicle_id),
  KEY vehicles_registration (registration),
  CONSTRAINT vehicles_customer FOREIGN KEY (customer_id) REFERENCES customers (customer_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- status: OPEN, IN_PROGRESS, COMPLETE, CANCELLED. registration is the plate
-- as written on the job card; vehicle_id is linked later by the front desk.
-- insurer_status and insurer_note are what the front desk sees of the
-- insurer's side (quotesync's shop.write_back fills them).
CREATE TABLE jobs (
  job_id       INT         NOT NULL AUTO_INCREMENT,
  job_no       VARCHAR(20) NOT NULL,
  customer_id  INT         NULL,
  vehicle_id   INT         NULL,
  registration VARCHAR(16) NULL,
  claim_number VARCHAR(64) NULL,
  insurer      VARCHAR(64) NULL,
  status       VARCHAR(16) NOT NULL DEFAULT 'OPEN',
  booking_date DATE        NULL,
  created_at   DATETIME    NOT NULL DEFAULT CURRENT_TIMESTAMP,
  insurer_status     VARCHAR(20)  NULL,
  insurer_note       VARCHAR(255) NULL,
  insurer_updated_at DATETIME     NULL,
  PRIMARY KEY (job_id),
  UNIQUE KEY jobs_job_no (job_no),
  KEY jobs_claim (claim_number),
  CONSTRAINT jobs_customer FOREIGN KEY (customer_id) REFERENCES customers (customer_id),
  CONSTRAINT jobs_vehicle FOREIGN KEY (vehicle_id) REFERENCES vehicles (vehicle_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- One estimate per job; status DRAFT or FINAL.
CREATE TABLE estimates (
  estimate_id INT        NOT NULL AUTO_INCREMENT,
  job_id      INT        NOT NULL,
  status      VARCHAR(8) NOT NULL DEFAULT 'DRAFT',
  updated_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (estimate_id),
  UNIQUE KEY estimates_job (job_id),
  KEY estimates_updated (updated_at),
  CONSTRAINT estimates_job_fk FOREIGN KEY (job_id) REFERENCES jobs (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- op_code: R&R, RPR, PNT, MECH, PART, SUNDRY. Lines are soft-deleted
-- (deleted = 1), never removed. The shop's application leaves a lot
-- nullable, as real ones do: the mapping's validation catches bad rows.
CREATE TABLE estimate_lines (
  line_id     INT           NOT NULL AUTO_INCREMENT,
  estimate_id INT           NOT NULL,
  line_no     INT           NOT NULL,
  op_code     VARCHAR(8)    NULL,
  description VARCHAR(255)  NULL,
  part_no     VARCHAR(40)   NULL,
  qty         DECIMAL(10,3) NULL,
  unit_price  DECIMAL(12,4) NULL,
  line_total  DECIMAL(12,2) NULL,
  markup      DECIMAL(12,4) NULL,
  on_report   TINYINT(1)    NULL,
  supplier    VARCHAR(40)   NULL,
  deleted     TINYINT(1)    NOT NULL DEFAULT 0,
  updated_at  DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (line_id),
  KEY estimate_lines_estimate (estimate_id, line_no),
  -- estimate_state reads only these columns: it is answered from the index.
  KEY estimate_lines_state (estimate_id, deleted, updated_at),
  KEY estimate_lines_updated (updated_at),
  CONSTRAINT estimate_lines_estimate_fk FOREIGN KEY (estimate_id) REFERENCES estimates (estimate_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
