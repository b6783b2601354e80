package cfgctl.plan

plan(changes) := {"format_version": 1, "target": "https://example.invalid", "changes": changes}

test_deleting_a_collection_is_denied if {
	denials := deny with input as plan([{"address": "Collection/checkout", "kind": "Collection", "slug": "checkout", "action": "delete"}])
	denials == {{"msg": "a plan never deletes a Collection: move its dashboards and monitors, then delete it by hand", "address": "Collection/checkout"}}
}

test_creating_or_updating_a_collection_passes if {
	denials := deny with input as plan([
		{"address": "Collection/checkout", "kind": "Collection", "slug": "checkout", "action": "update"},
		{"address": "Collection/search", "kind": "Collection", "slug": "search", "action": "create"},
	])
	count(denials) == 0
}

test_deleting_something_else_passes if {
	denials := deny with input as plan([{"address": "Dashboard/old", "kind": "Dashboard", "slug": "old", "action": "delete"}])
	count(denials) == 0
}
