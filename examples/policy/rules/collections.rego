# No plan deletes a Collection: its dashboards and monitors would lose their home. Delete one
# by hand, after review. A plan rule: its input is the JSON plan (`cfgctl plan --format json`).
package cfgctl.plan

deny contains {"msg": msg, "address": change.address} if {
	some change in input.changes
	change.kind == "Collection"
	change.action == "delete"
	msg := "a plan never deletes a Collection: move its dashboards and monitors, then delete it by hand"
}
