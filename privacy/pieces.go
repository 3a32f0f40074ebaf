package privacy

import (
	"io"
	"strings"
	"unsafe"
)

// Pieces calls write with doc in pieces of at least size bytes (the last
// may be shorter), in order, so that MaskSecrets of each piece, the masks
// joined, is MaskSecrets(doc): a writer that masks each write it is given
// (MaskWriter) then masks a document of hundreds of megabytes a piece at a
// time, as it would mask it whole.
//
// A piece ends just after a line end where no secret FindSecrets finds can
// span the cut. Most forms end at a line's end (a token, a URL, NAME=VALUE,
// a Bearer token); those that do not decide where a piece may end:
//   - a private key block runs from its BEGIN line to its END line, or over
//     the base64 lines after BEGIN where there is no END: no piece ends
//     inside one;
//   - the arguments of a command are split at white space, line ends too:
//     no piece ends after an option naming a secret (--password, whose
//     value may be the next line's first word), after aws configure or
//     set, after sshpass or its -p, between a .netrc entry's login and its
//     password, or before a word that a MySQL client's name looked back
//     past (sudo, env, NAME=VALUE); and after curl, a MySQL client, wandb,
//     redis-cli, docker or podman, whose options further on are read with
//     them, no piece ends at all;
//   - an AWS secret access key is told by an access key id anywhere in the
//     string: a document holding one and a run of bytes that may be such a
//     key (or may become one once a token glued to it is masked to its
//     prefix, AKIA…) goes out whole.
//
// Where no line end qualifies, the rest of the document is one piece.
func Pieces[T string | []byte](doc T, size int, write func(T) error) error {
	var ends []int
	switch d := any(doc).(type) {
	case string:
		ends, _ = pieceEnds(d, size, true)
	case []byte:
		ends, _ = pieceEnds(inPlace(d), size, true)
	}
	for _, end := range ends {
		if err := write(doc[:end]); err != nil {
			return err
		}
		doc = doc[end:]
	}
	return nil
}

// inPlace reads b as a string, in place, not copied: nothing writes to b
// while it is cut.
func inPlace(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// pieceEnds returns the lengths of doc's pieces, in order (see Pieces).
// Where doc is not final (more of the document follows it), a line end
// followed by white space alone is no end yet, and stuck says that no cut
// is sure after the last end returned (curl, ...: see commandState).
func pieceEnds(doc string, size int, final bool) (ends []int, stuck bool) {
	n := len(doc)
	if n <= size && final || awsKeyIDIn(doc) && awsSecretRunIn(doc) {
		return []int{n}, true
	}
	blocks := pemBlocks(doc)
	start := 0 // where the piece being cut starts
	cand := -1 // a line end after which the piece may end, pending the next word
	// recent are the last two words, quotes stripped as splitArgs strips
	// them, the last at recent[0].
	var recent [2]string
	for i := 0; i < n; {
		for i < n && isArgSep(doc[i]) {
			if doc[i] == '\n' && cand < 0 && i+1-start >= size && quietAfter(&recent) && !inBlock(&blocks, i+1) {
				cand = i + 1
			}
			i++
		}
		if i == n {
			break
		}
		j := i
		for j < n && !isArgSep(doc[j]) {
			j++
		}
		if j == n && !final {
			break // a word that may go on in what follows
		}
		text := doc[i:j]
		if len(text) >= 2 && (text[0] == '"' || text[0] == '\'') && text[len(text)-1] == text[0] {
			text = text[1 : len(text)-1]
		}
		if cand >= 0 {
			if quietBefore(text) {
				ends = append(ends, cand-start)
				start = cand
			}
			cand = -1
		}
		if commandState(text) {
			stuck = true
			break // curl, a MySQL client, wandb, ...: the rest is one piece
		}
		copy(recent[1:], recent[:len(recent)-1])
		recent[0] = text
		i = j
	}
	if cand >= 0 && final { // only white space follows
		ends = append(ends, cand-start)
		start = cand
	}
	if start < n {
		ends = append(ends, n-start)
	}
	return ends, stuck
}

// PieceWriter passes a document written to it in parts on to W in the
// pieces Pieces would cut the document into whole, holding back what
// follows the last sure cut; Flush writes the rest. It holds no more than
// a few pieces, unless no cut is sure (curl, ... in the text: the rest is
// held to the end). A document that WholeOnly reports must go to Pieces
// whole instead: what decides its cuts may come later in it.
type PieceWriter struct {
	W       io.Writer
	Size    int
	pending []byte
	stuck   bool
}

// Write holds p, and writes on the pieces that end before its last sure
// cut.
func (w *PieceWriter) Write(p []byte) (int, error) {
	w.pending = append(w.pending, p...)
	if w.stuck || len(w.pending) < 2*w.Size {
		return len(p), nil
	}
	ends, stuck := pieceEnds(inPlace(w.pending), w.Size, false)
	w.stuck = stuck
	done := 0
	for _, end := range ends[:len(ends)-1] { // the last piece may go on
		if _, err := w.W.Write(w.pending[done : done+end]); err != nil {
			return 0, err
		}
		done += end
	}
	w.pending = append(w.pending[:0], w.pending[done:]...)
	return len(p), nil
}

// Flush writes what is held, in pieces.
func (w *PieceWriter) Flush() error {
	ends, _ := pieceEnds(inPlace(w.pending), w.Size, true)
	done := 0
	for _, end := range ends {
		if _, err := w.W.Write(w.pending[done : done+end]); err != nil {
			return err
		}
		done += end
	}
	w.pending, w.stuck = w.pending[:0], false
	return nil
}

// WholeOnly reports whether doc, a document's text with or without the
// white space and line ends that a PieceWriter will be given between its
// words, holds what decides a cut from further on: a private key's BEGIN
// line (its END may come lines later), or an AWS access key id with what
// may be its secret key anywhere else. Such a document goes to Pieces
// whole.
func WholeOnly(doc []byte) bool {
	s := inPlace(doc)
	return strings.Contains(s, "-----BEGIN") || awsKeyIDIn(s) && awsSecretRunIn(s)
}

// quietAfter reports whether namedArgs, at the words ending a piece
// (recent, the last first), looks at none of the words after them: the
// last is no option naming a secret (--token VALUE), nor aws configure
// set's configure or set, nor a .netrc entry's password; the one before is
// no set (set NAME VALUE); neither is a .netrc entry's login or machine,
// whose password may follow in the next piece; and they are not sshpass or
// its -p, whose password follows. Masking a secret leaves two words where
// it was: no mask brings a word nearer a cut than these two.
func quietAfter(recent *[2]string) bool {
	last := recent[0]
	if opt := strings.TrimLeft(last, "-"); opt != last && secretName(opt) {
		return false
	}
	for _, w := range recent {
		if w == "login" || w == "machine" {
			return false // login USER | password PASSWORD
		}
	}
	if sshpassCommand(last) || strings.HasPrefix(last, "-p") && sshpassCommand(recent[1]) {
		return false // sshpass -p PASSWORD
	}
	return last != "configure" && last != "set" && last != "password" && recent[1] != "set"
}

// quietBefore reports whether the first word of a piece is one that
// commandAt, looking back from a MySQL client's name, stops at: not a
// command that runs the next (sudo, env, ...), not NAME=VALUE, not a MySQL
// client's name itself.
func quietBefore(text string) bool {
	switch {
	case text == "sudo" || text == "env" || text == "exec" || text == "time" || text == "nohup":
		return false
	case strings.IndexByte(text, '=') > 0 && text[0] != '-':
		return false
	}
	return !mysqlCommand(text[strings.LastIndexByte(text, '/')+1:])
}

// commandState reports whether a word may start what namedArgs carries
// from word to word until a shell's separator: curl's -u, a MySQL client's
// -p, wandb login's key, redis-cli's -a, docker login's -p. Masking never
// makes such a word, nor a separator the mask of a value kept, so where
// one stands no later cut is sure.
func commandState(text string) bool {
	base := text[strings.LastIndexByte(text, '/')+1:]
	return curlCommand(base) || mysqlCommand(base) || strings.HasSuffix(base, "wandb") ||
		strings.HasSuffix(base, "redis-cli") || loginCommand(base)
}

// awsKeyIDIn reports whether doc may hold an AWS access key id: AKIA or
// ASIA and 16 upper-case letters or digits.
func awsKeyIDIn(doc string) bool {
	for i := 0; i+20 <= len(doc); i++ {
		if doc[i] != 'A' || !(doc[i+1] == 'K' || doc[i+1] == 'S') || doc[i+2] != 'I' || doc[i+3] != 'A' {
			continue
		}
		k := i + 4
		for k < i+20 && upperNumByte[doc[k]] {
			k++
		}
		if k == i+20 {
			return true
		}
	}
	return false
}

// awsSecretRunIn reports whether doc holds a run of bytes awsSecrets may
// take for a secret access key, or that may grow into one: 34 or more
// bytes of awsSecretByte (a mask keeps at most 6 bytes of a token's prefix
// glued to the bytes before it, as ATATT3…, and none after).
func awsSecretRunIn(doc string) bool {
	run := 0
	for i := 0; i < len(doc); i++ {
		if !awsSecretByte[doc[i]] {
			run = 0
			continue
		}
		if run++; run >= 34 {
			return true
		}
	}
	return false
}

// pemBlocks returns the spans [start, end) of the private key blocks
// privateKeys finds in doc, by offset. An END line glued to the bytes before
// it (a token holding "-----END") may vanish when that token is masked, the
// block then running on to a later END: such a block is taken to run to
// the end of doc.
func pemBlocks(doc string) [][2]int {
	if !strings.Contains(doc, "-----BEGIN") {
		return nil
	}
	begins, ends := pemBegin.FindAllStringIndex(doc, -1), pemEnd.FindAllStringIndex(doc, -1)
	var blocks [][2]int
	last := 0
	for _, m := range begins {
		if m[0] < last {
			continue
		}
		for len(ends) > 0 && ends[0][0] < m[1] {
			ends = ends[1:]
		}
		var end int
		switch {
		case len(ends) == 0:
			end = pemBodyEnd(doc, m[1])
		case ends[0][0] > 0 && tokenByte[doc[ends[0][0]-1]]:
			end = len(doc)
		default:
			end = ends[0][1]
		}
		blocks = append(blocks, [2]int{m[0], end})
		last = end
	}
	return blocks
}

// inBlock reports whether a cut at offset c falls inside one of blocks,
// dropping from the front the blocks that end before c (cuts are asked
// for at growing offsets).
func inBlock(blocks *[][2]int, c int) bool {
	for len(*blocks) > 0 && (*blocks)[0][1] <= c {
		*blocks = (*blocks)[1:]
	}
	return len(*blocks) > 0 && (*blocks)[0][0] < c
}
