module example.com/textutil

go 1.22
