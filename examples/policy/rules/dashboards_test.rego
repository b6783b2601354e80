package main

dashboard(spec) := {
	"kind": "Dashboard",
	"address": "Dashboard/checkout-overview",
	"spec": object.union({"slug": "checkout-overview", "name": "Checkout overview", "labels": {"team": "checkout"}}, spec),
	"source": {"file": "dashboards.yaml", "line": 1},
	"environment": null,
}

test_a_dashboard_without_a_collection_is_denied if {
	denials := deny with input as dashboard({})
	denials == {"no collection: a dashboard belongs to a collection (`collection_slug`, or `collection: {type, slug}`)"}
}

test_a_dashboard_with_a_collection_slug_passes if {
	denials := deny with input as dashboard({"collection_slug": "checkout"})
	count(denials) == 0
}

test_a_dashboard_with_a_collection_reference_passes if {
	denials := deny with input as dashboard({"collection": {"type": "COLLECTION", "slug": "checkout"}})
	count(denials) == 0
}
