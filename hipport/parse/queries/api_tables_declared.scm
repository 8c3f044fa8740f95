; api_tables: names a file declares itself (functions, variables, function pointers, arrays),
; at any scope. A table name declared this way is the project's own entity, not the CUDA API.
(function_declarator declarator: (identifier) @declared)
(init_declarator declarator: (identifier) @declared)
(declaration declarator: (identifier) @declared)
(pointer_declarator declarator: (identifier) @declared)
(array_declarator declarator: (identifier) @declared)
(type_definition declarator: (type_identifier) @declared)
