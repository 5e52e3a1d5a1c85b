-- Finance reads ClickHouse directly, without write rights: a read-only role with bounded queries,
-- granted SELECT on the tables and views docs/finance-sql.md documents. Apply on a ClickHouse
-- server (with access management enabled) as an administrator, naming the database:
--   sed 's/{{database}}/callmeter/g' infra/clickhouse/roles/finance.sql | clickhouse client --multiquery
-- then give people the role:
--   CREATE USER alice IDENTIFIED WITH sha256_password BY '…' DEFAULT ROLE callmeter_finance;
--   GRANT callmeter_finance TO alice;
-- The embedded engine (chdb) has no users or roles: this file is for servers only. Not granted:
-- api_keys (key hashes) and the internal id indexes and lookup tables.

CREATE SETTINGS PROFILE IF NOT EXISTS callmeter_finance_profile SETTINGS
    readonly = 1,
    max_execution_time = 60,
    max_memory_usage = 10000000000,
    max_result_rows = 1000000,
    result_overflow_mode = 'throw';

CREATE ROLE IF NOT EXISTS callmeter_finance SETTINGS PROFILE 'callmeter_finance_profile';

GRANT SELECT ON {{database}}.usage_events TO callmeter_finance;
GRANT SELECT ON {{database}}.billing_periods TO callmeter_finance;
GRANT SELECT ON {{database}}.tenant_settings TO callmeter_finance;
GRANT SELECT ON {{database}}.budgets TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_rollup_15m TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_totals_daily TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_totals_15m TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_by_agent_daily TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_sessions_daily TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_session_starts TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_by_session TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_parts_totals TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_parts_by_session TO callmeter_finance;
GRANT SELECT ON {{database}}.unpriced_usage TO callmeter_finance;
GRANT SELECT ON {{database}}.sessions TO callmeter_finance;
GRANT SELECT ON {{database}}.sessions_current TO callmeter_finance;
GRANT SELECT ON {{database}}.sessions_by_user TO callmeter_finance;
GRANT SELECT ON {{database}}.sessions_by_room TO callmeter_finance;
GRANT SELECT ON {{database}}.agents TO callmeter_finance;
GRANT SELECT ON {{database}}.agents_by_user TO callmeter_finance;
GRANT SELECT ON {{database}}.telephony_number_holders TO callmeter_finance;
GRANT SELECT ON {{database}}.telephony_numbers TO callmeter_finance;
GRANT SELECT ON {{database}}.usage_events_dlq TO callmeter_finance;
GRANT SELECT ON {{database}}.dead_letters TO callmeter_finance;
GRANT SELECT ON {{database}}.rate_entries TO callmeter_finance;
GRANT SELECT ON {{database}}.audit_log TO callmeter_finance;
