-- Sample data: five jobs. See the Claim* constants in sampleshop.go.
INSERT INTO counters (name, next_val) VALUES ('job', 50005);

INSERT INTO customers (customer_id, name, phone, email) VALUES
  (1, 'Aroha Ngata', '021 555 0101', 'aroha@example.com'),
  (2, 'Ben Carter', '022 555 0202', 'ben.carter@example.com'),
  (3, 'Chen Wei', '027 555 0303', NULL),
  (4, 'Dana Walsh', NULL, 'dana@example.com'),
  (5, 'Eli Moana', '021 555 0505', NULL);

INSERT INTO vehicles (vehicle_id, customer_id, registration, vin, make, model, model_year) VALUES
  (1, 1, 'KLM123', 'JTDBR32E720012345', 'Toyota', 'Corolla', 2019),
  (2, 2, 'PQR456', 'WVWZZZ1KZAW123456', 'Volkswagen', 'Golf', 2021),
  (3, 3, 'XYZ789', NULL, 'Mazda', 'CX-5', 2018),
  (4, 4, 'ABC321', NULL, 'Ford', 'Ranger', 2022),
  (5, 5, 'MNO654', NULL, 'Honda', 'Jazz', 2015);

INSERT INTO jobs (job_id, job_no, customer_id, vehicle_id, registration, claim_number, insurer, status, booking_date) VALUES
  (1, 'RO-50001', 1, 1, 'KLM123', 'CLM-1001', 'Tower', 'OPEN', '2025-07-14'),
  (2, 'RO-50002', 2, 2, 'PQR456', 'CLM-1002', 'AA Insurance', 'IN_PROGRESS', '2025-07-10'),
  (3, 'RO-50003', 3, 3, 'XYZ789', 'CLM-1003', 'State', 'OPEN', NULL),
  (4, 'RO-50004', 4, 4, 'ABC321', NULL, NULL, 'OPEN', NULL),
  (5, 'RO-50005', 5, 5, 'MNO654', 'CLM-1005', 'Tower', 'OPEN', '2025-07-21');

INSERT INTO estimates (estimate_id, job_id, status, updated_at) VALUES
  (1, 1, 'DRAFT', '2025-07-01 09:00:00.000000'),
  (2, 2, 'FINAL', '2025-07-02 16:30:00.000000'),
  (3, 3, 'DRAFT', '2025-07-03 08:15:00.000000'),
  (4, 4, 'DRAFT', '2025-07-03 11:00:00.000000'),
  (5, 5, 'DRAFT', '2025-07-04 10:00:00.000000');

INSERT INTO estimate_lines (line_id, estimate_id, line_no, op_code, description, part_no, qty, unit_price, line_total, markup, on_report, supplier, deleted, updated_at) VALUES
  (1, 1, 1, 'R&R', 'Front bumper cover - remove and replace', NULL, 1.500, 95.5000, NULL, NULL, 1, NULL, 0, '2025-07-01 09:00:00.000000'),
  (2, 1, 2, 'PART', 'Bumper cover, front, primed', '52119-0K923', 1.000, 412.3750, 412.38, 41.2400, 1, 'OEM', 0, '2025-07-01 09:00:00.000000'),
  (3, 1, 3, 'PNT', 'Refinish front bumper cover', NULL, 2.500, 88.0000, 220.00, NULL, 0, NULL, 0, '2025-07-01 09:00:00.000000'),
  (4, 1, 4, 'RPR', 'Repair LH headlamp bracket', NULL, 0.750, 95.5000, NULL, NULL, NULL, NULL, 0, '2025-07-01 09:00:00.000000'),
  (5, 1, 5, 'SUNDRY', 'Paint materials', NULL, 1.000, 45.0000, 45.00, NULL, NULL, NULL, 1, '2025-07-01 09:05:00.000000'),
  (6, 2, 1, 'R&R', 'LH front door shell - remove and replace', NULL, 3.000, 95.5000, NULL, NULL, NULL, NULL, 0, '2025-07-02 16:00:00.000000'),
  (7, 2, 2, 'PART', 'Door shell, front left', '67002-12A70', 1.000, 1189.9900, 1189.99, 119.0000, 1, 'Aftermarket', 0, '2025-07-02 16:00:00.000000'),
  (8, 2, 3, 'MECH', 'Wheel alignment', NULL, 1.000, 120.0000, 120.00, NULL, NULL, NULL, 0, '2025-07-02 16:00:00.000000'),
  (9, 2, 4, 'SUNDRY', 'Environmental levy', NULL, 1.000, 12.5000, NULL, NULL, NULL, NULL, 0, '2025-07-02 16:00:00.000000'),
  (10, 5, 1, 'R&R', 'Rear bumper cover - remove and replace', NULL, 1.000, 95.5000, NULL, NULL, NULL, NULL, 0, '2025-07-04 10:00:00.000000'),
  (11, 5, 2, 'PART', 'Rear bumper cover (price to be confirmed)', '71501-TAR-G00', 1.000, NULL, NULL, NULL, NULL, NULL, 0, '2025-07-04 10:00:00.000000');
