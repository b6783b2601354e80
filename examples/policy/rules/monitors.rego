# Every Monitor is routed to a notification policy: an alert nobody receives is noise.
package main

deny contains msg if {
	input.kind == "Monitor"
	object.get(input.spec, "notification_policy_slug", "") == ""
	msg := "every Monitor is routed to a notification policy: set `notification_policy_slug`"
}
