package route

import (
	"cmp"
	"slices"
)

// Collision is a topic that receives records from more than one source
// table. Keys from different tables may then be equal, and a later record of
// one table would replace (or, with a tombstone, delete) the record of
// another under log compaction, so a plan shows collisions as warnings. They
// are intended when sharded tables are merged into one topic.
type Collision struct {
	// Topic is the shared topic.
	Topic string
	// Sources are the tables writing to Topic, sorted by db and table.
	Sources []TableID
}

// Collisions returns the topics that records of more than one of the given
// tables go to, sorted by topic. Duplicate entries in tables count once.
func (t *Table) Collisions(tables []TableID) []Collision {
	byTopic := make(map[string][]TableID)
	seen := make(map[TableID]bool, len(tables))
	for _, id := range tables {
		if seen[id] {
			continue
		}
		seen[id] = true
		for _, topic := range t.Topics(id.DB, id.Table) {
			byTopic[topic] = append(byTopic[topic], id)
		}
	}
	var out []Collision
	for topic, ids := range byTopic {
		if len(ids) > 1 {
			slices.SortFunc(ids, compareTableID)
			out = append(out, Collision{Topic: topic, Sources: ids})
		}
	}
	slices.SortFunc(out, func(a, b Collision) int { return cmp.Compare(a.Topic, b.Topic) })
	return out
}

func compareTableID(a, b TableID) int {
	return cmp.Or(cmp.Compare(a.DB, b.DB), cmp.Compare(a.Table, b.Table))
}
