package main

import "testing"

// adv19Cases: checks and replays of captures with many regions, and other
// inputs once answered slowly or wrongly.
func adv19Cases() []badCase {
	// distinct is the shipped export with its NVTX ranges replaced by n
	// sibling ranges, each of a name of its own (a program naming each
	// step by its number).
	distinct := func(n string) func(t *testing.T, dir string) []string {
		return sqliteEdit(`CREATE TEMP TABLE t AS SELECT globalTid AS g FROM NVTX_EVENTS LIMIT 1; DELETE FROM NVTX_EVENTS;
			WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ` + n + ` - 1)
			INSERT INTO NVTX_EVENTS(start, "end", eventType, rangeId, text, globalTid, domainId)
			SELECT 348946328 + i*22400, 348946328 + i*22400 + 22399, 59, 1000000 + i, 'step' || i, (SELECT g FROM t), 0 FROM n`)
	}
	return []badCase{
		{group: "NVTX ranges", name: "audit CAPTURE CAPTURE: 100k NVTX ranges each of a name of its own (once 89 s: each region after found by a scan of all)", cmd: "audit",
			make: func(t *testing.T, dir string) []string {
				p := distinct("100000")(t, dir)[0]
				return []string{p, p, "--nvidia-rule", "off"}
			},
			exit: 1, want: []string{"UNAVAILABLE", "not fixed: AFTER still makes 143 host-device copies from pageable memory"}},
	}
}
