// Package nsysdb is the one place that spells what Nsight Systems writes:
// the SQLite export's table names and their _V<n> versions, the enum tables,
// the global thread id, the `nsys stats` CSV report names of both
// generations, the magic bytes of an export and of a report, and the
// detection of an input's kind by its content. Every other package names an
// nsys table, report or magic number through this one.
package nsysdb
