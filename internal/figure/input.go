package figure

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// ReadInput returns the text of the files named, one after the other, or all of stdin
// when none is named ("-" names stdin too), as the plotting commands take their points.
// A file that cannot be read is an error naming it; a file's last line ends at the file.
func ReadInput(names []string, stdin io.Reader) ([]byte, error) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	var all bytes.Buffer
	for _, name := range names {
		var b []byte
		var err error
		if name == "-" {
			b, err = io.ReadAll(stdin)
		} else {
			b, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		all.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			all.WriteByte('\n')
		}
	}
	return all.Bytes(), nil
}
