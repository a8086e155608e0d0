package route_test

import (
	"fmt"

	"github.com/ingestkit/ingest/route"
)

// The route block of the example in docs/pipeline.md.
func ExampleTable_Topics() {
	tbl, err := route.NewTable([]route.Rule{
		{SourceTable: `shop_[0-9]+.orders`, SinkTable: "orders"},
		{SourceTable: `app_db.\.*`, SinkTable: "ods_<>", ReplaceSymbol: "<>"},
	}, route.AllMatch, "")
	if err != nil {
		panic(err)
	}
	fmt.Println(tbl.Topics("shop_1", "orders"))
	fmt.Println(tbl.Topics("shop_22", "orders"))
	fmt.Println(tbl.Topics("app_db", "users"))
	fmt.Println(tbl.Topics("shop_x", "orders"))
	for _, c := range tbl.Collisions([]route.TableID{{DB: "shop_1", Table: "orders"}, {DB: "shop_22", Table: "orders"}}) {
		fmt.Println(c.Topic, c.Sources)
	}
	// Output:
	// [orders]
	// [orders]
	// [ods_users]
	// [shop_x.orders]
	// orders [shop_1.orders shop_22.orders]
}

func ExampleParseSelector() {
	_, err := route.ParseSelector(`app_db.order.*`)
	fmt.Println(err)
	s, _ := route.ParseSelector(`app_db.order\.*`)
	fmt.Println(s.Match("APP_DB", "orders"), s.Match("app_db", "customers"))
	// Output:
	// table pattern "app_db.order.*" has 3 parts because every unescaped '.' separates db and table, and a MySQL table pattern needs exactly 2; write app_db.order\.* to mean any characters
	// true false
}
