package nsyscsv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nvtx_sum is read a row at a time; read only for the check against
// nvtx_pushpop_trace it keeps the push/pop ranges' rows alone, and a bad
// value is named by its data row whichever way it is read.
func TestNVTXSumRows(t *testing.T) {
	head := "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n"
	rows := []string{
		"48.6,539211927,1,539211927.0,539211927.0,539211927,539211927,0.0,PushPop,:h2d-pageable\n",
		"0.0,100,3,100.0,100.0,100,100,0.0,StartEnd,:loader\n",
		"26.4,293671567,2,293671567.0,293671567.0,293671567,293671567,0.0,PushPop,:d2h-pageable\n",
	}
	p := filepath.Join(t.TempDir(), "x_nvtx_sum.csv")
	if err := os.WriteFile(p, []byte(head+strings.Join(rows, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	all, pushPop, err := readNVTXSum(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || len(pushPop) != 3 || !pushPop[0] || pushPop[1] || !pushPop[2] || all[1].Name != "loader" || all[1].Instances != 3 {
		t.Errorf("every row: %+v, push/pop %v", all, pushPop)
	}
	only, pushPop, err := readNVTXSum(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(only) != 2 || only[0].Name != "h2d-pageable" || only[1].Name != "d2h-pageable" || only[1].Instances != 2 || only[1].TotalNs != 293671567 || !pushPop[0] || !pushPop[1] {
		t.Errorf("the push/pop rows: %+v, %v", only, pushPop)
	}
	bad := strings.Replace(rows[2], ",2,", ",two,", 1)
	if err := os.WriteFile(p, []byte(head+rows[0]+rows[1]+bad), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pp := range []bool{false, true} {
		if _, _, err := readNVTXSum(p, pp); err == nil || !strings.Contains(err.Error(), `data row 3, column "Instances"`) {
			t.Errorf("pushPopOnly %v: a bad count in data row 3: %v", pp, err)
		}
	}
}
