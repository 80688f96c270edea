SELECT j.booking_date FROM jobs j WHERE j.job_no = :job
