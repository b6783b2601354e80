# Everything that takes labels carries a `team` label, so that an owner can be found.
package main

# The kinds whose spec has `labels` (spec/config-api-v1.swagger.json).
labelled_kinds := {"Bucket", "Dashboard", "Monitor", "SLO"}

deny contains msg if {
	labelled_kinds[input.kind]
	object.get(input.spec, ["labels", "team"], "") == ""
	msg := "no `team` label: everything that takes labels names its owning team (`labels: {team: ...}`)"
}
