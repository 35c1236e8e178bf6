import { render } from "preact";
const App = () => <p>hello</p>;
render(<App />, document.getElementById("app")!);
