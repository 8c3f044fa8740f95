; Lexical regions as tree-sitter sees them; the lexer must agree on clean files.
(comment) @comment
(string_literal) @string
(char_literal) @string
(raw_string_literal) @string
(concatenated_string) @concat
(preproc_include path: (_) @include)
(preproc_arg) @macro
