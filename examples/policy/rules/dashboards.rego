# No dashboard outside a collection: collections are how dashboards are found and owned.
package main

deny contains msg if {
	endswith(input.kind, "Dashboard") # Dashboard, ClassicDashboard, GrafanaDashboard
	not in_a_collection
	msg := "no collection: a dashboard belongs to a collection (`collection_slug`, or `collection: {type, slug}`)"
}

in_a_collection if object.get(input.spec, "collection_slug", "") != ""

in_a_collection if object.get(input.spec, ["collection", "slug"], "") != ""
