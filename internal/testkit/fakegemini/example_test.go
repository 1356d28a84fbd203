package fakegemini_test

import (
	"context"
	"fmt"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"google.golang.org/genai"
)

func Example() {
	s := fakegemini.New()
	defer s.Close()
	s.Enqueue(fakegemini.Respond(
		fakegemini.Text("Checking "), fakegemini.Text("the weather."),
		fakegemini.FunctionCall("getWeather", map[string]any{"city": "Paris"}),
	))

	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: s.URL()},
	})
	if err != nil {
		panic(err)
	}
	for resp, err := range client.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("Weather in Paris?"), nil) {
		if err != nil {
			panic(err)
		}
		if text := resp.Text(); text != "" {
			fmt.Printf("text %q\n", text)
		}
		for _, fc := range resp.FunctionCalls() {
			fmt.Printf("call %s(%v) finish=%s\n", fc.Name, fc.Args, resp.Candidates[0].FinishReason)
		}
	}
	fmt.Println("prompt:", s.Requests()[0].LastUserText())
	// Output:
	// text "Checking "
	// text "the weather."
	// call getWeather(map[city:Paris]) finish=STOP
	// prompt: Weather in Paris?
}
