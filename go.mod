module onic

go 1.26
