-- A denormalised schema: work orders numbered by AUTO_INCREMENT, lines
-- that carry the work order number themselves (no estimates table, no
-- foreign key), a status word on the work order, lines deleted outright,
-- and change times the server keeps current.
CREATE TABLE workorders (
  wo_no    INT         NOT NULL AUTO_INCREMENT,
  claim    VARCHAR(30) NULL,
  plate    VARCHAR(12) NULL,
  state    VARCHAR(12) NOT NULL DEFAULT 'open',
  modified TIMESTAMP   NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (wo_no),
  KEY workorders_claim (claim)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE wo_items (
  item_id  INT           NOT NULL AUTO_INCREMENT,
  wo_no    INT           NOT NULL,
  line     INT           NOT NULL,
  op       VARCHAR(10)   NULL,
  text     VARCHAR(255)  NULL,
  qty      DECIMAL(10,2) NULL,
  price    DECIMAL(10,2) NULL,
  total    DECIMAL(10,2) NULL,
  modified TIMESTAMP     NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (item_id),
  KEY wo_items_wo (wo_no),
  KEY wo_items_modified (modified)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO workorders (wo_no, claim, plate, state) VALUES
  (7001, 'C-881', 'JKL789', 'quoting'),
  (7002, 'C-882', 'MNP012', 'final'),
  (7003, NULL, 'QRS345', 'open');
INSERT INTO wo_items (item_id, wo_no, line, op, text, qty, price, total) VALUES
  (1, 7001, 1, 'R&R', 'Replace windscreen', 1.00, 120.00, 120.00),
  (2, 7001, 2, 'PARTS', 'Windscreen, laminated', 1.00, 540.00, 540.00),
  (3, 7001, 3, 'MECH', 'Recalibrate ADAS camera', 1.50, 140.00, 210.00),
  (4, 7002, 1, 'PAINT', 'Blend rear door', 2.00, 92.00, 184.00);
