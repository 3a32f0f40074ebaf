package program

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// MiscasedKey returns the JSON path of the first object key of data that
// names a field of v's type only when case is ignored ("regions.pass.Instances"),
// with the field's own name, or "" when there is none or data is not valid
// JSON (the decoder reports that). encoding/json reads a key into the field
// whose name matches it in any case, so {"copies": 192, "Copies": 5} would
// be read as 5 and pass DuplicateKey, whose keys are not alike, and the
// decoder's check of unknown fields; for every JSON file a user gives.
// Keys of maps (region names, claims) are names, matched exactly; a field
// without a JSON name of its own is matched in any case.
func MiscasedKey(data []byte, v any) (path, field string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(t reflect.Type, at string, depth int) bool
	// skip reads past one value whose first token is tok.
	skip := func(tok json.Token) bool {
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
			for n := 1; n > 0; {
				t, err := dec.Token()
				if err != nil {
					return false
				}
				if d, ok := t.(json.Delim); ok {
					if d == '{' || d == '[' {
						n++
					} else {
						n--
					}
				}
			}
		}
		return true
	}
	walk = func(t reflect.Type, at string, depth int) bool {
		tok, err := dec.Token()
		if err != nil || depth > MaxJSONDepth {
			return false
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		d, isDelim := tok.(json.Delim)
		switch {
		case isDelim && d == '{' && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map):
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				key, _ := kt.(string)
				elem := t
				if t.Kind() == reflect.Map {
					elem = t.Elem()
				} else if f, exact, ok := fieldOf(t, key); ok && !exact {
					path, field = joinPath(at, key), f.name
					return false
				} else if ok {
					elem = f.typ
				} else {
					vt, err := dec.Token()
					if err != nil || !skip(vt) {
						return false
					}
					continue
				}
				if !walk(elem, joinPath(at, key), depth+1) {
					return false
				}
			}
			_, err := dec.Token()
			return err == nil
		case isDelim && d == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			for i := 0; dec.More(); i++ {
				if !walk(t.Elem(), at+"["+strconv.Itoa(i)+"]", depth+1) {
					return false
				}
			}
			_, err := dec.Token()
			return err == nil
		}
		return skip(tok)
	}
	walk(reflect.TypeOf(v), "", 0)
	return path, field
}

// namedField is a struct field as JSON names it.
type namedField struct {
	name string
	typ  reflect.Type
}

// fieldOf finds the exported field of struct type t that JSON key names:
// exact when the names match, else one whose name matches in another case.
func fieldOf(t reflect.Type, key string) (f namedField, exact, ok bool) {
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, tagged := sf.Name, false
		if tag, _, _ := strings.Cut(sf.Tag.Get("json"), ","); tag == "-" {
			continue
		} else if tag != "" {
			name, tagged = tag, true
		}
		switch {
		case name == key, !tagged && strings.EqualFold(name, key):
			// A field the type does not name for JSON is read in any case.
			return namedField{name, sf.Type}, true, true
		case strings.EqualFold(name, key):
			f, ok = namedField{name, sf.Type}, true
		}
	}
	return f, false, ok
}

// joinPath adds key to a JSON path.
func joinPath(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}
