-- A repair-order schema unlike the sample shop: job numbers such as
-- RO-000451 from a sequences table that holds the last number given out,
-- one-letter status codes on the header (O open, E estimating, F final,
-- X cancelled), no foreign keys declared, soft-deleted lines (del_flag
-- 'Y'), DECIMAL(12,4) money, and tables that are not about jobs at all.
CREATE TABLE sequences (
  seq_name VARCHAR(20) NOT NULL,
  last_no  INT         NOT NULL,
  PRIMARY KEY (seq_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE staff (
  staff_id INT         NOT NULL AUTO_INCREMENT,
  name     VARCHAR(80) NOT NULL,
  PRIMARY KEY (staff_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE invoices (
  invoice_id INT           NOT NULL AUTO_INCREMENT,
  invoice_no VARCHAR(20)   NOT NULL,
  ro_id      INT           NOT NULL,
  amount     DECIMAL(12,4) NOT NULL,
  PRIMARY KEY (invoice_id),
  UNIQUE KEY invoices_no (invoice_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE ro_header (
  ro_id        INT         NOT NULL AUTO_INCREMENT,
  ro_number    VARCHAR(12) NOT NULL,
  ins_claim_no VARCHAR(40) NULL,
  rego         VARCHAR(10) NULL,
  ro_status    CHAR(1)     NOT NULL,
  date_in      DATE        NULL,
  opened_at    DATETIME    NOT NULL,
  advisor_id   INT         NULL,
  PRIMARY KEY (ro_id),
  UNIQUE KEY ro_header_number (ro_number),
  KEY ro_header_claim (ins_claim_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE ro_lines (
  ro_line_id   BIGINT        NOT NULL AUTO_INCREMENT,
  ro_id        INT           NOT NULL,
  seq          SMALLINT      NOT NULL,
  labour_type  VARCHAR(4)    NOT NULL,
  descr        VARCHAR(200)  NULL,
  part_num     VARCHAR(30)   NULL,
  hours_or_qty DECIMAL(12,4) NULL,
  unit_amt     DECIMAL(12,4) NULL,
  ext_amt      DECIMAL(12,4) NULL,
  del_flag     CHAR(1)       NOT NULL DEFAULT 'N',
  PRIMARY KEY (ro_line_id),
  KEY ro_lines_ro (ro_id, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO sequences (seq_name, last_no) VALUES ('INV', 9120), ('RO', 452);
INSERT INTO staff (staff_id, name) VALUES (1, 'Mere'), (2, 'Tom');
INSERT INTO ro_header (ro_id, ro_number, ins_claim_no, rego, ro_status, date_in, opened_at, advisor_id) VALUES
  (1, 'RO-000450', 'HX-77001', 'ABC12', 'E', '2026-11-02', '2026-11-01 08:00:00', 1),
  (2, 'RO-000451', 'HX-77002', 'DEF34', 'F', NULL, '2026-11-03 09:30:00', 2),
  (3, 'RO-000452', NULL, 'GHI56', 'O', NULL, '2026-11-04 10:00:00', 1);
INSERT INTO invoices (invoice_id, invoice_no, ro_id, amount) VALUES (1, 'INV-9120', 2, 1200.0000);
INSERT INTO ro_lines (ro_line_id, ro_id, seq, labour_type, descr, part_num, hours_or_qty, unit_amt, ext_amt, del_flag) VALUES
  (1, 1, 1, 'RR', 'Remove and replace front guard', NULL, 2.5000, 110.0000, 275.0000, 'N'),
  (2, 1, 2, 'PA', 'Front guard, LH', 'FG-1182', 1.0000, 389.1250, NULL, 'N'),
  (3, 1, 3, 'PT', 'Refinish front guard', NULL, 3.0000, 98.5000, 295.5000, 'N'),
  (4, 1, 4, 'RP', 'Dent repair bonnet edge', NULL, 1.2500, 110.0000, NULL, 'Y'),
  (5, 2, 1, 'RR', 'Remove and replace tail lamp', NULL, 0.5000, 110.0000, 55.0000, 'N'),
  (6, 2, 2, 'PA', 'Tail lamp assembly', 'TL-2201', 1.0000, 245.9900, 245.9900, 'N'),
  (7, 2, 3, 'SU', 'Consumables', NULL, 1.0000, 18.0000, NULL, 'N');
