-- Terminal rows are read back for a while after their last change.
CREATE INDEX `{{prefix}}requests_phase_updated` ON `{{prefix}}requests` (phase, updated_at)
