-- A flat estimate table: no table of jobs at all. quote_lines holds the
-- estimate's lines, and every line repeats the job number, the insurer's
-- claim, the registration and the status (OPEN, then FINAL on every line
-- when the estimate is done); the shop's program makes a job by writing
-- its first line. Lines are soft-deleted ('Y'), the change time is kept by
-- the server, and a parts table holds quantities and prices too, but of
-- stock, not of jobs.
CREATE TABLE quote_lines (
  line_id      INT           NOT NULL AUTO_INCREMENT,
  job_no       VARCHAR(10)   NOT NULL,
  claim_no     VARCHAR(30)   NULL,
  rego         VARCHAR(10)   NULL,
  quote_status VARCHAR(8)    NOT NULL DEFAULT 'OPEN',
  line_no      SMALLINT      NOT NULL,
  op           VARCHAR(6)    NOT NULL,
  description  VARCHAR(120)  NOT NULL,
  qty          DECIMAL(9,2)  NOT NULL,
  rate         DECIMAL(11,2) NULL,
  amount       DECIMAL(11,2) NULL,
  deleted      CHAR(1)       NOT NULL DEFAULT 'N',
  changed_at   TIMESTAMP     NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (line_id),
  KEY quote_lines_job (job_no, line_no),
  KEY quote_lines_claim (claim_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE parts_stock (
  stock_id    INT           NOT NULL AUTO_INCREMENT,
  part_no     VARCHAR(30)   NOT NULL,
  description VARCHAR(120)  NOT NULL,
  qty         DECIMAL(9,2)  NOT NULL,
  price       DECIMAL(11,2) NOT NULL,
  PRIMARY KEY (stock_id),
  UNIQUE KEY parts_stock_part (part_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE customers (
  customer_id INT          NOT NULL AUTO_INCREMENT,
  name        VARCHAR(80)  NOT NULL,
  phone       VARCHAR(20)  NULL,
  PRIMARY KEY (customer_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO parts_stock (part_no, description, qty, price) VALUES
  ('HL-2231', 'Headlamp, left', 2.00, 310.00), ('BM-0090', 'Bumper clip', 40.00, 1.20);
INSERT INTO customers (name, phone) VALUES ('A. Ngata', '021 555 0101'), ('B. Smith', NULL);
INSERT INTO quote_lines (line_id, job_no, claim_no, rego, quote_status, line_no, op, description, qty, rate, amount, deleted) VALUES
  (1, 'Q-2001', 'INS-3301', 'KRT512', 'OPEN', 1, 'R&R', 'Front bumper, remove and refit', 1.50, 92.00, 138.00, 'N'),
  (2, 'Q-2001', 'INS-3301', 'KRT512', 'OPEN', 2, 'PRT', 'Headlamp, left', 1.00, 310.00, 310.00, 'N'),
  (3, 'Q-2001', 'INS-3301', 'KRT512', 'OPEN', 3, 'PNT', 'Refinish bumper', 2.00, 88.00, NULL, 'N'),
  (4, 'Q-2001', 'INS-3301', 'KRT512', 'OPEN', 4, 'PRT', 'Fog lamp (not needed)', 1.00, 95.00, 95.00, 'Y'),
  (5, 'Q-2002', 'INS-3302', 'WPL900', 'FINAL', 1, 'RPR', 'Repair rear door', 3.00, 92.00, 276.00, 'N'),
  (6, 'Q-2002', 'INS-3302', 'WPL900', 'FINAL', 2, 'PNT', 'Refinish rear door', 2.50, 88.00, 220.00, 'N'),
  (7, 'Q-2003', NULL, 'ZZT118', 'OPEN', 1, 'RPR', 'Stone chip', 0.50, 92.00, 46.00, 'N'),
  (8, 'Q-2004', 'INS-3304', 'MNO331', 'FINAL', 1, 'R&R', 'Mirror glass', 0.30, 92.00, 27.60, 'N'),
  (9, 'Q-2004', 'INS-3304', 'MNO331', 'OPEN', 2, 'PRT', 'Mirror glass, heated', 1.00, 64.00, 64.00, 'N');
