package shopdb_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

func validConfig() shopdb.Config {
	cfg := sampleshop.Mapping()
	cfg.User, cfg.Password, cfg.Database = "quotesync", "s3cret-pw", "shop"
	return cfg
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*shopdb.Config)
		want string // "" = valid; else the start of the error
	}{
		{"Valid", nil, ""},
		{"NoUser", func(c *shopdb.Config) { c.User = "" }, "shop.user: required"},
		{"NoDatabase", func(c *shopdb.Config) { c.Database = "" }, "shop.database: required"},
		{"BadPrefix", func(c *shopdb.Config) { c.TablePrefix = "qs-" }, `shop.table_prefix: "qs-" must be`},
		{"LongPrefix", func(c *shopdb.Config) { c.TablePrefix = strings.Repeat("q", 33) }, "shop.table_prefix:"},
		{"LongLockName", func(c *shopdb.Config) { c.LockName = strings.Repeat("l", 65) }, "shop.lock_name:"},
		{"LongLifetime", func(c *shopdb.Config) { c.ConnMaxLifetime = 10 * time.Minute }, "shop.conn_max_lifetime: 10m0s must be"},
		{"LongIdleTime", func(c *shopdb.Config) { c.ConnMaxIdleTime = 6 * time.Minute }, "shop.conn_max_idle_time: 6m0s must be"},
		{"NegativeIdleTime", func(c *shopdb.Config) { c.ConnMaxIdleTime = -time.Second }, "shop.conn_max_idle_time: -1s must be"},
		{"OneConn", func(c *shopdb.Config) { c.MaxOpenConns = 1 }, "shop.max_open_conns: 1 must be at least 2"},
		{"SessionTimeoutTooShort", func(c *shopdb.Config) { c.LockHeartbeat = 20 * time.Second }, "shop.lock_session_timeout: 30s must be at least twice"},
		{"BadTLS", func(c *shopdb.Config) { c.TLS = "maybe" }, "shop.tls:"},
		{"ParamName", func(c *shopdb.Config) { c.Params = map[string]string{"reg-no": "vehicle.registration"} }, "shop.params.reg-no:"},
		{"ParamBuiltin", func(c *shopdb.Config) { c.Params = map[string]string{"job": "vehicle.registration"} }, "shop.params.job: job is a built-in"},
		{"ParamPath", func(c *shopdb.Config) { c.Params = map[string]string{"registration": "vehicle..registration"} }, "shop.params.registration:"},
		{"NoWorkTypes", func(c *shopdb.Config) { c.WorkTypes = nil }, "shop.work_types: required"},
		{"EmptyWorkType", func(c *shopdb.Config) { c.WorkTypes = map[string]string{"R&R": ""} }, "shop.work_types.R&R:"},
		{"NoFindNoCreate", func(c *shopdb.Config) { c.Queries.FindJob, c.Queries.CreateJob = "", nil }, "shop.queries: set find_job, create_job or both"},
		{"OnlyCreate", func(c *shopdb.Config) { c.Queries.FindJob = "" }, ""},
		{"OnlyFind", func(c *shopdb.Config) { c.Queries.CreateJob = nil }, ""},
		{"NoLineItems", func(c *shopdb.Config) { c.Queries.LineItems = " " }, "shop.queries.line_items: required"},
		{"NoEstimateState", func(c *shopdb.Config) { c.Queries.EstimateState = "" }, "shop.queries.estimate_state: required"},
		{"LineItemsWithoutJobs", func(c *shopdb.Config) { c.Queries.LineItems = "SELECT * FROM estimate_lines" }, "shop.queries.line_items: must use :jobs"},
		{"UnknownParam", func(c *shopdb.Config) { c.Queries.FindJob = "SELECT job_no FROM jobs WHERE registration = :rego" },
			"shop.queries.find_job: unknown parameter :rego; known here: :request_id, :claim_number, :expiry, :registration"},
		{"JobNotInFindJob", func(c *shopdb.Config) { c.Queries.FindJob = "SELECT job_no FROM jobs WHERE job_no = :job" },
			"shop.queries.find_job: unknown parameter :job"},
		{"JobInBookingDate", func(c *shopdb.Config) {
			c.Queries.BookingDate = "SELECT booking_date FROM jobs WHERE job_no = :job AND claim_number = :claim_number"
		}, ""},
		{"RequestParamInLineItems", func(c *shopdb.Config) {
			c.Queries.LineItems = "SELECT * FROM x WHERE job IN (:jobs) AND claim = :claim_number"
		}, "shop.queries.line_items: unknown parameter :claim_number; known here: :jobs"},
		{"UnknownParamInCreateJob", func(c *shopdb.Config) {
			c.Queries.CreateJob = []string{"UPDATE counters SET next_val = next_val + 1", "SELECT :nope AS job"}
		}, "shop.queries.create_job[1]: unknown parameter :nope"},
		{"EmptyCreateJobStatement", func(c *shopdb.Config) { c.Queries.CreateJob = []string{"SELECT 1", ""} }, "shop.queries.create_job[1]: empty statement"},
		{"LoneColon", func(c *shopdb.Config) {
			c.Queries.FindJob = "SELECT job_no FROM jobs WHERE DATE_FORMAT(created_at, '%H:%i') = '10:30' AND claim_number = :claim_number"
		}, `shop.queries.find_job: ":" at offset`},
		{"EscapedColon", func(c *shopdb.Config) {
			c.Queries.FindJob = "SELECT job_no FROM jobs WHERE DATE_FORMAT(created_at, '%H::%i') = '10::30' AND claim_number = :claim_number"
		}, ""},
		{"LiteralQuestionMark", func(c *shopdb.Config) {
			c.Queries.FindJob = "SELECT job_no FROM jobs WHERE notes = 'why?' AND claim_number = :claim_number"
		}, `shop.queries.find_job: contains a literal "?"`},
		{"Assignment", func(c *shopdb.Config) {
			c.Queries.CreateJob = []string{"SELECT @n := next_val FROM counters", "SELECT CONCAT('RO-', @n) AS job"}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := validConfig()
			if c.edit != nil {
				c.edit(&cfg)
			}
			err := cfg.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Validate: %v, want nil", err)
			case c.want != "" && err == nil:
				t.Fatalf("Validate: nil, want %q…", c.want)
			case c.want != "" && !strings.HasPrefix(err.Error(), c.want):
				t.Fatalf("Validate:\n got %v\nwant %s…", err, c.want)
			}
		})
	}
}

func TestConfigHidesPassword(t *testing.T) {
	cfg := validConfig()
	for _, out := range []string{cfg.String(), fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprint(&cfg)} {
		if strings.Contains(out, cfg.Password) {
			t.Errorf("%q shows the password", out)
		}
		if !strings.Contains(out, "quotesync@127.0.0.1:3306/shop") {
			t.Errorf("%q does not say where it connects", out)
		}
	}
	// A failed login names the user and the server, never the password.
	d := shopdbtest.NewDatabase(t)
	bad := d.Config()
	bad.User, bad.Password = "quotesync_nobody", "pw-that-must-not-leak"
	_, err := shopdb.Open(testContext(t), bad)
	if err == nil {
		t.Fatal("Open with a wrong password succeeded")
	}
	if strings.Contains(err.Error(), bad.Password) {
		t.Errorf("error %q shows the password", err)
	}
	if !strings.Contains(err.Error(), "quotesync_nobody") {
		t.Errorf("error %q does not name the user", err)
	}
}

func TestOpenValidates(t *testing.T) {
	cfg := validConfig()
	cfg.Queries.LineItems = ""
	if _, err := shopdb.Open(testContext(t), cfg); err == nil || !strings.HasPrefix(err.Error(), "shop.queries.line_items") {
		t.Errorf("Open with an invalid mapping: %v, want the shop.queries.line_items error", err)
	}
}
