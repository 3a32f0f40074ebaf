package auditjson

import "strconv"

// nullInArray finds the first null an array of the JSON data holds as an
// element (no audit writes one: a list of classes, regions or findings
// holds objects), and returns where, as "findings[0].evidence[2]" (the
// keys and indexes from the audit's object down), and ok. It
// reads data once, byte by byte, holding only the path of the containers
// it is in; data is JSON that decoded, as readAudit has it.
func nullInArray(data []byte) (at string, ok bool) {
	type open struct {
		array bool
		key   string // the key the container is the value of, "" for none
		index int    // an array's elements before the current one
	}
	var stack []open
	var lastKey string // the last object key read, until its value opens
	expectValue := false
	for i := 0; i < len(data); i++ {
		switch b := data[i]; b {
		case '"':
			j := i + 1
			for ; j < len(data) && data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++
				}
			}
			if n := len(stack); n > 0 && !stack[n-1].array && !expectValue {
				if s, err := strconv.Unquote(string(data[i : j+1])); err == nil {
					lastKey = s
				} else {
					lastKey = string(data[i+1 : j])
				}
			}
			expectValue = false
			i = j
		case ':':
			expectValue = true
		case '{', '[':
			stack = append(stack, open{array: b == '[', key: lastKey})
			lastKey, expectValue = "", false
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectValue = false
		case ',':
			if n := len(stack); n > 0 && stack[n-1].array {
				stack[n-1].index++
			}
			expectValue = false
		case 'n':
			if n := len(stack); n > 0 && stack[n-1].array {
				var path []byte
				for _, c := range stack {
					if c.key != "" {
						if len(path) > 0 {
							path = append(path, '.')
						}
						path = append(path, c.key...)
					}
					if c.array {
						path = append(append(append(path, '['), strconv.Itoa(c.index)...), ']')
					}
				}
				return string(path), true
			}
			i += 3
			expectValue = false
		case 't', 'f':
			expectValue = false
		}
	}
	return "", false
}
