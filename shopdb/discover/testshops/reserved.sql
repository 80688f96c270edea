-- Names that must be quoted: tables and columns named by reserved words
-- (Order, Desc, Position), mixed case, and a name with a non-ASCII
-- letter. Job numbers such as A1001 with no counter and no
-- AUTO_INCREMENT (the largest plus one), a foreign key from the lines.
CREATE TABLE `Order` (
  `OrderID`  INT         NOT NULL AUTO_INCREMENT,
  `Number`   VARCHAR(20) NOT NULL,
  `ClaimRef` VARCHAR(40) NULL,
  `Kenteken` VARCHAR(10) NULL,
  `Status`   VARCHAR(10) NOT NULL,
  PRIMARY KEY (`OrderID`),
  UNIQUE KEY `OrderNumber` (`Number`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE `OrderLine` (
  `LineID`     INT           NOT NULL AUTO_INCREMENT,
  `OrderID`    INT           NOT NULL,
  `Position`   INT           NOT NULL,
  `Type`       VARCHAR(10)   NULL,
  `Desc`       VARCHAR(120)  NULL,
  `Menge`      DECIMAL(9,3)  NULL,
  `Stückpreis` DECIMAL(12,4) NULL,
  `Deleted`    TINYINT(1)    NOT NULL DEFAULT 0,
  PRIMARY KEY (`LineID`),
  CONSTRAINT `OrderLineOrder` FOREIGN KEY (`OrderID`) REFERENCES `Order` (`OrderID`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO `Order` (`OrderID`, `Number`, `ClaimRef`, `Kenteken`, `Status`) VALUES
  (1, 'A1001', 'VZ-5001', '12-AB-34', 'Offerte'),
  (2, 'A1002', 'VZ-5002', '56-CD-78', 'Definitief');
INSERT INTO `OrderLine` (`LineID`, `OrderID`, `Position`, `Type`, `Desc`, `Menge`, `Stückpreis`, `Deleted`) VALUES
  (1, 1, 1, 'RR', 'Voorbumper vervangen', 1.000, 95.0000, 0),
  (2, 1, 2, 'PART', 'Voorbumper', 1.000, 310.5000, 0),
  (3, 1, 3, 'PNT', 'Spuiten voorbumper', 2.000, 85.0000, 0),
  (4, 2, 1, 'REP', 'Deuk herstellen', 1.500, 95.0000, 0);
