; Names a file declares for itself: members, and functions/variables declared in a scope.
(field_identifier) @member
(function_declarator declarator: (identifier) @declared)
(init_declarator declarator: (identifier) @declared)
(declaration declarator: (identifier) @declared)
