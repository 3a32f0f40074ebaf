package main
import (
 _ "github.com/spf13/cobra"
 _ "github.com/mattn/go-sqlite3"
 _ "github.com/gocarina/gocsv"
 _ "gonum.org/v1/gonum/stat"
 _ "gonum.org/v1/plot"
 _ "github.com/rogpeppe/go-internal/testscript"
)
func main(){}
