package predictions

// Words is the lesson's own text with typed values in it: a claim's
// statement and unit, a table's or chart's lesson text. report renders
// each value in its unit, so that a threshold is written once, as the
// constant the criterion tests.
type Words []Piece

// Piece is a piece of Words: Text, or a typed value.
type Piece interface{ isPiece() }

// Text is plain lesson text.
type Text string

// Size is a byte count ("256 MiB").
type Size int64

// Times is a factor ("1.3x").
type Times float64

// Percent is a share, written as a percentage ("80%").
type Percent float64

// Plain is a number written as it is ("0.6").
type Plain float64

// Count is a small whole number written as a word ("ten", "two").
type Count int

func (Text) isPiece()    {}
func (Size) isPiece()    {}
func (Times) isPiece()   {}
func (Percent) isPiece() {}
func (Plain) isPiece()   {}
func (Count) isPiece()   {}

// Say makes Words of pieces: a string is Text, a Piece itself.
func Say(pieces ...any) Words {
	out := make(Words, 0, len(pieces))
	for _, p := range pieces {
		switch p := p.(type) {
		case string:
			out = append(out, Text(p))
		case Piece:
			out = append(out, p)
		default:
			panic("predictions.Say: not a piece")
		}
	}
	return out
}
